package scan

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
)

// Downloads bound to a later run: a file a line downloads (curl -o x,
// wget URL) and a later line runs (bash x, ./x), or a variable a line sets
// to a download (code = urlopen(u).read()) and a later line evaluates
// (exec(code)). One line's pattern cannot see both halves.

// Bounds on the downloads one text follows.
const (
	maxDownloads = 64
	// maxDownloadName bounds a downloaded file's or variable's name.
	maxDownloadName = 128
	// maxAssignment bounds what a line may hold before the download it
	// assigns.
	maxAssignment = 256
)

// fetchWords are the pack's keywords at which a download may start.
var fetchWords = []string{"curl", "wget", "fetch", "aria2c", "urlopen", "urllib.request", "requests.", "urlretrieve", "downloadstring"}

// download is a file or variable a text fills from the network.
type download struct {
	// name is the file's path (pathKey), or the variable's name (code
	// set); base is the file's base name.
	name, base string
	code       bool
	// off is where it was found in the view scanned; line is its line.
	off, line int
}

// noteDownload records the download, if any, that the keyword found at
// t[start:end] starts.
func (s *scanner) noteDownload(t []byte, start, end int) {
	if len(s.downloads) >= maxDownloads {
		return
	}
	if word[t[end-1]] && end < len(t) && (word[t[end]] || t[end] == '-') {
		return // curl-config, fetch-depth
	}
	// urlretrieve(url, path) writes the file path (urllib.request's
	// urlretrieve is found as a word of its own too).
	if bytes.EqualFold(t[start:end], []byte("urlretrieve")) {
		if end < len(t) && t[end] == '(' {
			if name := retrievedTo(t[end+1 : min(len(t), end+windowAfter)]); name != "" {
				s.downloads = append(s.downloads, download{name: name, base: baseName(name), off: start})
			}
		}
		return
	}
	// A command (curl URL, fetch URL) writes a file; a call (urlopen(,
	// requests.get(, fetch() returns the download, to a variable.
	if t[end-1] != '.' && (end == len(t) || t[end] != '(') && !bytes.EqualFold(t[start:end], []byte("urlopen")) {
		if name := downloadedFile(t, start, end); name != "" {
			s.downloads = append(s.downloads, download{name: name, base: baseName(name), off: start})
		}
		return
	}
	if end == len(t) || t[end-1] == '.' && !word[t[end]] {
		return // "pull requests." in prose
	}
	// At most maxAssignment bytes back: a text of one long line costs
	// no more than one of many.
	ls := max(0, start-maxAssignment)
	if k := bytes.LastIndexByte(t[ls:start], '\n'); k >= 0 {
		ls += k + 1
	}
	if name := assignedTo(t[ls:start]); name != "" {
		s.downloads = append(s.downloads, download{name: name, code: true, off: start})
	} else if name := writtenTo(t[ls:start]); name != "" {
		s.downloads = append(s.downloads, download{name: name, base: baseName(name), off: start})
	}
}

// writtenFile is a file opened to be written with what a call returns:
// open("x", "w").write(, Path("x").write_text(.
var writtenFile = regexp.MustCompile(`(?i)\b(open\(\s*["']([^"'\n]{1,128})["']\s*,\s*["'](w|a|wb|ab|w\+|wb\+)["']\s*\)\s*\.write|path\(\s*["']([^"'\n]{1,128})["']\s*\)\s*\.write_(text|bytes))\(\s*$`)

// writtenTo is the file (pathKey) that pre, the line up to a download
// call, writes the download to, or "".
func writtenTo(pre []byte) string {
	m := writtenFile.FindSubmatch(pre)
	if m == nil {
		return ""
	}
	path := m[2]
	if len(path) == 0 {
		path = m[4]
	}
	if name := baseOf(path); len(name) == 0 || dataFile(name) {
		return ""
	}
	return pathKey(path)
}

// retrievedTo is the file (pathKey) that urlretrieve's arguments, args
// (after its parenthesis), name second as a string, or "".
func retrievedTo(args []byte) string {
	depth := 0
	for i, c := range args {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			if depth--; depth < 0 {
				return ""
			}
		case '\n':
			return ""
		case ',':
			if depth > 0 {
				continue
			}
			rest := bytes.TrimLeft(args[i+1:], " \t")
			if len(rest) == 0 || rest[0] != '"' && rest[0] != '\'' {
				return ""
			}
			k := bytes.IndexByte(rest[1:], rest[0])
			if k <= 0 || k > maxDownloadName {
				return ""
			}
			path := rest[1 : 1+k]
			if name := baseOf(path); len(name) == 0 || dataFile(name) {
				return ""
			}
			return pathKey(path)
		}
	}
	return ""
}

// assignedTo is the variable that pre, the line up to a download call,
// assigns ("code = ", "const js = await (await "), or "".
func assignedTo(pre []byte) string {
	p := bytes.TrimLeft(pre, " \t")
	p = bytes.TrimPrefix(p, []byte("$")) // PowerShell's $c = …
	for _, kw := range []string{"const ", "let ", "var "} {
		if q, ok := bytes.CutPrefix(p, []byte(kw)); ok {
			p = bytes.TrimLeft(q, " \t")
			break
		}
	}
	n := 0
	for n < len(p) && n < maxDownloadName && word[p[n]] {
		n++
	}
	if n == 0 || '0' <= p[0] && p[0] <= '9' {
		return ""
	}
	rest := bytes.TrimLeft(p[n:], " \t")
	if len(rest) == 0 || rest[0] != '=' || len(rest) > 1 && rest[1] == '=' {
		return ""
	}
	// Only a call may stand between the = and the download.
	for _, c := range rest[1:] {
		if c == ';' || c == '=' {
			return ""
		}
	}
	return strings.ToLower(string(p[:n]))
}

// downloadedFile is the base name of the file a download command at
// t[start:end] writes (curl -o, -O, >; wget and fetch, named by the URL
// unless -O says otherwise; aria2c -o), or "" for none, for output to a
// pipe or standard output, and for archives and data, which are unpacked
// or read rather than run.
func downloadedFile(t []byte, start, end int) string {
	cmd := t[start:end]
	isCurl := bytes.EqualFold(cmd, []byte("curl"))
	if !isCurl && !bytes.EqualFold(cmd, []byte("wget")) && !bytes.EqualFold(cmd, []byte("fetch")) && !bytes.EqualFold(cmd, []byte("aria2c")) {
		return ""
	}
	seg := t[end:min(len(t), end+windowAfter)]
	var teed []byte
	for k, c := range seg {
		if commandEnd[c] {
			if c == '|' {
				// Piped: the pipe-to-shell rules read it, unless into
				// tee, which writes the file too (curl URL | tee x.sh).
				if teed = teeFile(seg[k+1:]); teed == nil {
					return ""
				}
			}
			seg = seg[:k]
			break
		}
	}
	var out, url []byte
	remote := !isCurl
	// Each word of seg, without its quotes (no allocation: most
	// downloads are of archives, and are dropped below).
	field := func(i int) ([]byte, int) {
		for i < len(seg) && (seg[i] == ' ' || seg[i] == '\t') {
			i++
		}
		j := i
		for j < len(seg) && seg[j] != ' ' && seg[j] != '\t' {
			j++
		}
		return unquote(seg[i:j]), j
	}
	for i := 0; i < len(seg); {
		tok, j := field(i)
		i = j
		if len(tok) == 0 {
			continue
		}
		var next []byte
		after := i
		if tok[0] == '-' || tok[0] == '>' {
			next, after = field(i)
		}
		switch {
		case tok[0] != '-' && tok[0] != '>':
			if url == nil && bytes.Contains(tok, []byte("://")) {
				url = tok
			}
		case tok[0] == '>':
			if out = tok[1:]; len(out) == 0 {
				out, i = next, after
			}
		case len(tok) == 2 && (tok[1] == 'o' || tok[1] == 'O') && (len(next) == 0 || next[0] != '-'):
			out, i = next, after
		case len(tok) > 2 && tok[1] == '-':
			name, value, eq := bytes.Cut(tok[2:], []byte("="))
			switch string(name) {
			case "output", "out", "output-document":
				if out = value; !eq {
					out, i = next, after
				}
			case "remote-name", "remote-name-all":
				remote = true
			}
		case len(tok) > 1:
			// A cluster of short options: o takes the rest, or the next
			// word; curl's O names the file after the URL.
			k := bytes.IndexByte(tok, 'o')
			if k < 0 {
				k = bytes.IndexByte(tok, 'O')
			}
			if k > 0 {
				switch {
				case k+1 < len(tok):
					out = tok[k+1:]
				case len(next) > 0 && next[0] != '-' && !bytes.Contains(next, []byte("://")):
					out, i = next, after
				default:
					remote = true
				}
			}
		}
	}
	if teed != nil {
		out = teed
	}
	path := out
	if len(out) == 0 || string(out) == "-" {
		if string(out) == "-" || !remote || url == nil {
			return ""
		}
		path = baseOf(url)
		if k := bytes.IndexByte(path, '?'); k >= 0 {
			path = path[:k]
		}
		if k := bytes.IndexByte(path, '#'); k >= 0 {
			path = path[:k]
		}
	}
	if name := baseOf(path); len(name) == 0 || len(path) > maxDownloadName || dataFile(name) {
		return ""
	}
	return pathKey(path)
}

// teeFile is the file a pipe into tee, cmd (after the |), writes: its
// first operand (tee -a x, sudo tee x); nil if cmd is no tee or names none.
func teeFile(cmd []byte) []byte {
	toks := bytes.Fields(cmd)
	i := 0
	for i < len(toks) && (bytes.EqualFold(toks[i], []byte("sudo")) || bytes.EqualFold(toks[i], []byte("doas"))) {
		i++
	}
	if i == len(toks) || !bytes.EqualFold(toks[i], []byte("tee")) {
		return nil
	}
	for _, tok := range toks[i+1:] {
		switch {
		case commandEnd[tok[0]] || tok[0] == '>':
			return nil
		case tok[0] != '-':
			return unquote(tok)
		}
	}
	return nil
}

// pathKey is how a downloaded or run file is compared: lower-cased,
// without a leading ./ or the punctuation of a sentence it ends.
func pathKey(p []byte) string {
	p = bytes.TrimRight(p, ".,:;!?")
	for bytes.HasPrefix(p, []byte("./")) {
		p = p[2:]
	}
	return strings.ToLower(string(p))
}

// samePath reports whether a run of path run (base name runBase) runs
// the file d downloaded: the same path where both name a folder, else the
// same base name (wget's file in the working folder, a cd between them).
func samePath(d download, run, runBase string) bool {
	if d.base != runBase {
		return false
	}
	if strings.ContainsAny(d.name, `/\`) && strings.ContainsAny(run, `/\`) {
		return d.name == run
	}
	return d.base == runBase
}

// commandEnd are the bytes that end a download command.
var commandEnd = func() (e [256]bool) {
	for _, c := range "\n;&|`)" {
		e[c] = true
	}
	return e
}()

// sentenceEnd are the bytes a path in a sentence may be followed by.
var sentenceEnd = func() (e [256]bool) {
	for _, c := range "/.,:;!?" {
		e[c] = true
	}
	return e
}()

// unquote is a word without the quotes around it.
func unquote(w []byte) []byte {
	for len(w) > 0 && (w[0] == '"' || w[0] == '\'') {
		w = w[1:]
	}
	for len(w) > 0 && (w[len(w)-1] == '"' || w[len(w)-1] == '\'') {
		w = w[:len(w)-1]
	}
	return w
}

// baseOf is the last element of a path, without the punctuation of a
// sentence it ends.
func baseOf(p []byte) []byte {
	for len(p) > 0 && sentenceEnd[p[len(p)-1]] {
		p = p[:len(p)-1]
	}
	for k := len(p) - 1; k >= 0; k-- {
		if p[k] == '/' || p[k] == '\\' {
			p = p[k+1:]
			break
		}
	}
	if string(p) == "." || string(p) == ".." {
		return nil
	}
	return p
}

// baseName is baseOf p, lower-cased.
func baseName(p string) string { return strings.ToLower(string(baseOf([]byte(p)))) }

// dataFile reports whether a file's extension marks one a skill
// downloads to unpack, check or read (tool.tar.gz ends in gz).
func dataFile(name []byte) bool {
	k := bytes.LastIndexByte(name, '.')
	ext := name[k+1:]
	if k < 0 || len(ext) > 9 {
		return false
	}
	var low [9]byte
	for i, c := range ext {
		low[i] = lower[c]
	}
	switch string(low[:len(ext)]) {
	case "tgz", "tar", "zip", "gz", "xz", "bz2", "zst", "7z", "json", "yaml", "yml", "toml", "csv", "txt", "md",
		"html", "xml", "sha256", "sha512", "sha256sum", "asc", "sig", "pem", "crt", "png", "jpg", "jpeg", "gif", "svg", "pdf", "deb",
		"rpm", "dmg", "pkg", "msi", "whl":
		return true
	}
	return false
}

// interpreters are the commands that run the script named by their first
// operand.
var interpreters = set("sh", "bash", "zsh", "ksh", "dash", "fish", "source", ".", "python", "python2", "python3", "node",
	"perl", "ruby", "php", "pwsh", "powershell", "deno", "bun")

// prefixes are the commands that run the command after them, and what
// stands before a command in the files that hold one: a prompt ($, >), a
// blockquote (>), a list item or a CI step (- run:), a Dockerfile's RUN.
var prefixes = set("sudo", "doas", "exec", "nohup", "env", "command", "time", "nice", "then", "do", "else", "run:", "run", "$",
	">", "-", "*", "call", "start")

// runsOfDownloads reports each later line of v (or of the shell view sv)
// that runs a file or evaluates a variable that an earlier line
// downloaded.
func (s *scanner) runsOfDownloads(v, sv *view, dl []download, out emit) {
	first := dl[0].line
	for _, d := range dl {
		first = min(first, d.line)
	}
	first = max(first, 1) // line 0: another file's, before every line
	// What a line must hold to be read further: a downloaded file's
	// base name, as a name (not inside a word: "en" is not run by "then"),
	// or a call that evaluates code.
	var names, calls [][]byte
	for _, d := range dl {
		if d.code {
			calls = evalCalls
		} else if n := []byte(d.base); !slices.ContainsFunc(names, func(b []byte) bool { return bytes.Equal(b, n) }) {
			names = append(names, n)
		}
	}
	found := map[string]int{}
	for _, w := range []*view{v, sv} {
		if w == nil {
			continue
		}
		t := w.text
		from := 0
		if w == v && first-1 < len(v.lines) && v.orig == nil {
			from = v.lines[first-1]
		}
		// Lower-cased once, and only the lines holding a needle read.
		s.low = slices.Grow(s.low[:0], len(t)-from)[:len(t)-from]
		low := s.low
		lowerASCII(low, t[from:])
		for _, ls := range linesHolding(low, names, calls) {
			le := indexByteFrom(low, ls, '\n')
			if le < 0 {
				le = len(low)
			}
			at := from + ls
			if r, off := runOf(low[ls:le], dl, func(off int) int { return w.line(at + off) }); r != "" && found[r] < maxPerRule {
				found[r]++
				rule := s.p.detector["downloaded-file-run"]
				if r == "code" {
					rule = s.p.detector["downloaded-code-eval"]
				}
				out(rule, w.line(at+off), "")
				if found["file"]+found["code"] >= 2*maxPerRule {
					return
				}
			}
		}
	}
}

// linesHolding is where each line of t that holds one of names (as a
// name: neither it nor a word it is in goes on past it) or of calls
// starts, in order. Each needle is looked for with one pass of
// bytes.Index, skipping to the end of the line it was found on.
func linesHolding(t []byte, names, calls [][]byte) []int {
	var all, mine, merged []int
	for i, n := range slices.Concat(names, calls) {
		mine = appendLinesHolding(mine[:0], t, n, i < len(names))
		// The union of two sorted lists, sorted.
		merged = merged[:0]
		a, b := all, mine
		for len(a) > 0 || len(b) > 0 {
			switch {
			case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
				merged, a = append(merged, a[0]), a[1:]
			case len(a) == 0 || b[0] < a[0]:
				merged, b = append(merged, b[0]), b[1:]
			default:
				merged, a, b = append(merged, a[0]), a[1:], b[1:]
			}
		}
		all, merged = merged, all
	}
	return all
}

// appendLinesHolding appends to lines where each line of t that holds n
// starts (as a name only, when name is set).
func appendLinesHolding(lines []int, t, n []byte, name bool) []int {
	for i, from := 0, 0; from < len(t); {
		k := bytes.Index(t[from:], n)
		if k < 0 {
			break
		}
		at, end := from+k, from+k+len(n)
		if name && !isName(t, at, end) {
			from = at + 1
			continue
		}
		ls := i
		if j := bytes.LastIndexByte(t[i:at], '\n'); j >= 0 {
			ls = i + j + 1
		}
		lines = append(lines, ls)
		if i = indexByteFrom(t, at, '\n'); i < 0 {
			break
		}
		i++
		from = i
	}
	return lines
}

// isName reports whether t[at:end] is a name of its own: neither it nor
// a word it is in goes on past it ("en" is not in "then", nor "x" in
// "tar -x" or "x.y").
func isName(t []byte, at, end int) bool {
	return (at == 0 || !word[t[at-1]] && t[at-1] != '-' && t[at-1] != '.') && (end == len(t) || !word[t[end]] && t[end] != '-')
}

// fileDownload is a file that a file of the artifact downloads.
type fileDownload struct {
	path string
	d    download
}

// noteAcross keeps the files dl (of the file being scanned) downloads, for
// runsAcross: a variable is its script's own, and is not kept.
func (s *scanner) noteAcross(dl []download) {
	for _, d := range dl {
		if !d.code && len(s.across) < maxDownloads {
			s.across = append(s.across, fileDownload{s.path, d})
		}
	}
}

// runsAcross reports each line of a text file of files (text[i]: file i
// was read as text) that runs a file another one downloads: the payload
// split across files (SKILL.md says curl -o /tmp/x.sh URL, a script runs
// bash /tmp/x.sh). Whichever comes first, the download is before the run:
// an agent reads the skill before it runs its scripts. Only the lines
// naming a download are read again.
func (s *scanner) runsAcross(files []archive.File, text []bool) {
	// The downloads of the other files: of every file for a file that
	// downloads none, built once.
	others := func(path string) (dl []download, names [][]byte, from string) {
		for _, a := range s.across {
			if a.path == path {
				continue
			}
			d := a.d
			d.line = 0
			dl = append(dl, d)
			if n := []byte(d.base); !slices.ContainsFunc(names, func(b []byte) bool { return bytes.Equal(b, n) }) {
				names = append(names, n)
			}
			if from == "" || from == a.path {
				from = a.path
			} else {
				from = "another file of the skill"
			}
		}
		return dl, names, "the file is downloaded in " + from
	}
	allDl, allNames, allNote := others("")
	downloads := map[string]bool{}
	for _, a := range s.across {
		downloads[a.path] = true
	}
	for i, f := range files {
		if !text[i] {
			continue
		}
		dl, names, note := allDl, allNames, allNote
		if downloads[f.Path] {
			if dl, names, note = others(f.Path); len(dl) == 0 {
				continue
			}
		}
		path := f.Path
		for _, t := range textsOf(f.Data) {
			lines := s.linesNaming(t, names)
			if lines == nil {
				continue
			}
			if s.text += int64(len(lines)); s.text > s.budget.MaxTextBytes {
				s.overBudget(func(r *Rule, line int, n string) { s.add(r, path, line, n) }, 1)
				return
			}
			v, _ := normalize(lines)
			s.runsOfDownloads(v, shellView(v), dl, func(r *Rule, line int, n string) { s.add(r, path, line, join(note, n)) })
		}
	}
}

// linesNaming is t with only the lines that hold one of names (as a
// name, lower-cased), and those continued into them (a line ending in a
// backslash), each other line left empty, so that a line keeps its
// number; nil if no line holds one.
func (s *scanner) linesNaming(t []byte, names [][]byte) []byte {
	s.low = slices.Grow(s.low[:0], len(t))[:len(t)]
	lowerASCII(s.low, t)
	lines := linesHolding(s.low, names, nil)
	if len(lines) == 0 {
		return nil
	}
	var out []byte
	done := 0 // where the lines not yet written start
	for _, at := range lines {
		ls := at
		for ls > done {
			prev := bytes.TrimRight(t[done:ls-1], "\r")
			p := bytes.LastIndexByte(prev, '\n') + 1
			if !bytes.HasSuffix(prev[p:], []byte("\\")) {
				break
			}
			ls = done + p
		}
		for range bytes.Count(t[done:ls], []byte("\n")) {
			out = append(out, '\n')
		}
		le := indexByteFrom(t, at, '\n') + 1
		if le == 0 {
			le = len(t)
		}
		out = append(out, t[ls:le]...)
		done = le
	}
	return out
}

// evalCalls are the calls that evaluate code they are given, or run it
// as a shell command.
var evalCalls = [][]byte{[]byte("exec("), []byte("eval("), []byte("new function("), []byte("execsync("), []byte("os.system("),
	[]byte("os.popen("), []byte("runinthiscontext("), []byte("runinnewcontext("), []byte("invoke-expression "), []byte("iex ")}

// runOf finds in line (lower-cased) a run of a download of dl found on an
// earlier line: "file" for a file run, "code" for a variable evaluated,
// and where it starts in line; line(off) is the line of offset off.
func runOf(line []byte, dl []download, lineOf func(int) int) (string, int) {
	// earlier: a download of name is on an earlier line, or, for a
	// variable, earlier on this one (const t = await …; eval(t)).
	earlier := func(name string, code bool, off int) bool {
		ln := -1
		base := name
		if !code {
			base = baseName(name)
		}
		for _, d := range dl {
			if d.code == code && (code && d.name == name || !code && samePath(d, name, base)) {
				if ln < 0 {
					ln = lineOf(off)
				}
				if d.line < ln || code && d.line == ln && assigns(line[:off], name) {
					return true
				}
			}
		}
		return false
	}
	for _, call := range evalCalls {
		for i := 0; ; {
			k := indexFrom(line, i, string(call))
			if k < 0 {
				break
			}
			i = k + len(call)
			arg := bytes.TrimLeft(line[i:], " \t")
			if c, ok := bytes.CutPrefix(arg, []byte("compile(")); ok {
				arg = bytes.TrimLeft(c, " \t")
			}
			arg = bytes.TrimPrefix(arg, []byte("$")) // iex $c
			n := 0
			for n < len(arg) && word[arg[n]] {
				n++
			}
			if n > 0 && earlier(string(arg[:n]), true, k) {
				return "code", k
			}
		}
	}
	seg := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && bytes.IndexByte([]byte(";&|`()"), line[i]) < 0 {
			continue
		}
		if name, at, bare := scriptRun(line[seg:i]); name != "" && earlier(name, false, seg+at) &&
			(!bare || seg == 0 || line[seg-1] != '`' || runVerb(line[:seg])) {
			return "file", seg + at
		}
		seg = i + 1
	}
	return "", 0
}

// assigns reports whether pre assigns the variable name (name = …).
func assigns(pre []byte, name string) bool {
	for i := 0; ; {
		k := indexFrom(pre, i, name)
		if k < 0 {
			return false
		}
		i = k + len(name)
		rest := bytes.TrimLeft(pre[i:], " \t")
		if (k == 0 || !word[pre[k-1]]) && len(rest) > 1 && rest[0] == '=' && rest[1] != '=' {
			return true
		}
	}
}

// runVerbs, before a path in inline code, say it is run, not named.
var runVerbs = [][]byte{[]byte("run"), []byte("exec"), []byte("start"), []byte("launch"), []byte("invoke"), []byte("call")}

func runVerb(pre []byte) bool {
	for _, v := range runVerbs {
		if bytes.Contains(pre, v) {
			return true
		}
	}
	return false
}

// binDirs are where a command named by its path (/usr/bin/env) is read
// as the command it names.
var binDirs = []string{"/bin/", "/usr/bin/", "/usr/local/bin/"}

// command is tok without quotes, and, when it is a prefix or an
// interpreter named by its path in binDirs, without the path.
func command(tok []byte) string {
	c := string(bytes.Trim(tok, `"'`))
	for _, dir := range binDirs {
		if b, ok := strings.CutPrefix(c, dir); ok && (interpreters[b] || prefixes[b]) {
			return b
		}
	}
	return c
}

// scriptRun is the file a command runs (bash x, ./x, /tmp/x), as pathKey
// gives it, and where the command starts in cmd; "" for none. bare is
// set for a path run as a command, which inline code in prose may only
// name ("edit `./x.sh`").
func scriptRun(cmd []byte) (name string, at int, bare bool) {
	if c := bytes.TrimLeft(cmd, " \t"); len(c) > 0 && c[0] == '[' {
		// A command as a list (subprocess.run(["bash", "x.sh"])): its
		// words, without the brackets, quotes and commas.
		cmd = bytes.Map(func(r rune) rune {
			if strings.ContainsRune(`[]"',`, r) {
				return ' '
			}
			return r
		}, cmd)
		name, at, _ = scriptRun(cmd)
		return name, at, false
	}
	toks := bytes.Fields(cmd)
	i := 0
	for i < len(toks) && (prefixes[command(toks[i])] || i > 0 && prefixes[command(toks[i-1])] && toks[i][0] == '-' ||
		bytes.IndexByte(toks[i], '=') > 0 && i > 0 && command(toks[i-1]) == "env") {
		i++
	}
	if i == len(toks) {
		return "", 0, false
	}
	at = bytes.Index(cmd, toks[i])
	first := command(toks[i]) // an interpreter by its path too: /bin/sh x
	if interpreters[first] || strings.HasPrefix(first, "python3.") {
		for _, tok := range toks[i+1:] {
			switch a := string(bytes.Trim(tok, `"',`)); {
			case a == "-c" || a == "-e" || a == "-m" || a == "-" || a == "<":
				return "", 0, false
			case a != "" && a[0] != '-':
				return pathKey([]byte(a)), at, false
			}
		}
		return "", 0, false
	}
	if strings.ContainsAny(first, `/\`) && !strings.Contains(first, "://") {
		return pathKey([]byte(first)), at, true
	}
	return "", 0, false
}
