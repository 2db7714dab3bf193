package scan

import (
	"bytes"
	"encoding/base64"
	"hash/crc32"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Validators: checks a pattern's match must pass too, so that documented
// placeholders and look-alikes are not reported as secrets. Each gets the
// view's text and the match's bounds.

// notExample refuses AWS's documentation keys (…EXAMPLE, …EXAMPLEKEY).
func notExample(t []byte, start, end int) bool {
	return !bytes.Contains(bytes.ToUpper(t[start:end]), []byte("EXAMPLE"))
}

// pemBody accepts a private key header followed by a body that decodes to
// a plausible key of at least 40 bytes (an Ed25519 PKCS #8 key is 48): DER
// (an ASN.1 SEQUENCE), an OpenSSH key, or an armored PGP key.
func pemBody(t []byte, _, end int) bool {
	rest := t[end:]
	stop := bytes.Index(rest, []byte("-----END"))
	if stop < 0 {
		return false
	}
	var body []byte
	for _, line := range bytes.Split(rest[:stop], []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if bytes.IndexByte(line, ':') >= 0 { // armor headers (Proc-Type, Version)
			continue
		}
		body = append(body, line...)
	}
	if i := bytes.IndexByte(body, '='); i >= 0 && bytes.HasPrefix(t[end-len(" BLOCK-----"):end], []byte(" BLOCK-----")) {
		body = body[:i] // a PGP block's checksum line follows the '='
	}
	der, err := base64.StdEncoding.DecodeString(string(body))
	if err != nil {
		der, err = base64.RawStdEncoding.DecodeString(string(bytes.TrimRight(body, "=")))
	}
	if err != nil || len(der) < 40 {
		return false
	}
	return der[0] == 0x30 || bytes.HasPrefix(der, []byte("openssh-key-v1\x00")) || der[0]&0x80 != 0
}

// githubChecksum checks the CRC-32 a GitHub token ends with: the last six
// characters are the base62 CRC-32 of the thirty before them. Fine-grained
// tokens (github_pat_) carry no public checksum and pass.
func githubChecksum(t []byte, start, end int) bool {
	tok := t[start:end]
	if bytes.HasPrefix(tok, []byte("github_pat_")) {
		return true
	}
	i := bytes.IndexByte(tok, '_')
	if i < 0 || len(tok)-i-1 != 36 {
		return false
	}
	random, sum := tok[i+1:len(tok)-6], tok[len(tok)-6:]
	return string(sum) == base62CRC(random)
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62CRC is the CRC-32 of b in base62, padded to six characters.
func base62CRC(b []byte) string {
	n := crc32.ChecksumIEEE(b)
	out := []byte("000000")
	for i := 5; i >= 0 && n > 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out)
}

// lookBack is how far before a match the validators read its line: a
// line that starts further back is too long to judge (whole false), and
// each judges it the strict way, so that a text of one long line costs a
// bounded amount per match and hides nothing by its length.
const lookBack = 4096

// lineStart is where the logical line holding offset i of t starts, or,
// when that is more than lookBack bytes back (whole false), i-lookBack.
func lineStart(t []byte, i int) (ls int, whole bool) {
	from := max(0, i-lookBack)
	if k := bytes.LastIndexByte(t[from:i], '\n'); k >= 0 {
		return from + k + 1, true
	}
	return from, from == 0
}

// words are the lower-cased words of b (letters, digits, _ and -).
func words(b []byte) []string {
	return strings.FieldsFunc(strings.ToLower(string(b)), func(r rune) bool {
		return r != '_' && r != '-' && (r < '0' || r > '9') && (r < 'a' || r > 'z')
	})
}

// readVerbs are the commands and calls that read a file's content (or
// carry it off).
var readVerbs = set("cat", "tac", "nl", "less", "more", "head", "tail", "base64", "xxd", "od", "hexdump", "strings",
	"tar", "zip", "7z", "gzip", "bzip2", "xz", "cp", "mv", "scp", "rsync", "dd", "gpg", "openssl", "curl", "wget",
	"nc", "ncat", "netcat", "socat", "sqlite3", "get-content", "gc", "copy-item", "compress-archive", "open",
	"readfile", "readfilesync", "read_text", "read_bytes", "read", "copyfile", "copy2", "copytree", "shutil",
	"expanduser", "homedir", "grep", "awk", "sed", "cut", "tee", "upload", "send", "exfiltrate")

// keyUses are the commands that use a key without reading it out, when
// they start the command.
var keyUses = set("ssh", "ssh-add", "ssh-keygen", "ssh-copy-id", "chmod", "chown", "mkdir", "touch", "ls", "rm", "test", "stat")

// keyOptions are the options and settings that name a key for a program to
// use (ssh -i, IdentityFile), not a read of it.
var keyOptions = set("-i", "identityfile", "-identityfile", "--identity", "--identity-file", "--key-file", "--private-key",
	"--ssh-key", "identity_file", "private_key_file", "key_file", "-k", "--netrc-file")

// readOptions are the options whose value (after =) is a file a program
// reads and sends (wget --body-file=…).
var readOptions = set("--body-file", "--post-file", "--upload-file", "--data-binary", "--data", "--data-raw")

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// readsCredential accepts a credential file's path only where its content
// is read: the path follows, in its command, a command or call that reads
// (cat, tar, scp, curl, open(…)), or a < redirection or curl's @file; not
// a public key (.pub), nor a key named for a program to use (ssh -i,
// IdentityFile, ssh-add, chmod 600), nor a mention in prose.
func readsCredential(t []byte, start, end int) bool {
	if bytes.HasSuffix(bytes.ToLower(bytes.TrimRight(t[start:end], " \t\"'`)")), []byte(".pub")) {
		return false
	}
	ls, whole := lineStart(t, start)
	if !whole {
		return true // too long a line to tell a read from a mention: a read
	}
	// The token that holds the path, and what comes before it.
	ts := start
	for ts > ls && bytes.IndexByte([]byte(" \t|;&()`<>\"'"), t[ts-1]) < 0 {
		ts--
	}
	prefix := bytes.ToLower(t[ts:start])
	if bytes.Contains(prefix, []byte("identityfile")) {
		return false
	}
	if bytes.IndexByte(prefix, '@') >= 0 {
		return true // curl -F f=@path, -d @path
	}
	j := ts
	for j > ls && (t[j-1] == ' ' || t[j-1] == '"' || t[j-1] == '\'' || t[j-1] == '\t') {
		j--
	}
	if j > ls && t[j-1] == '<' {
		return true
	}
	p := j
	for p > ls && t[p-1] != ' ' && t[p-1] != '\t' {
		p--
	}
	prev := strings.ToLower(strings.Trim(string(t[p:j]), `"'`))
	if readOptions[strings.TrimSuffix(prev, "=")] {
		return true
	}
	if keyOptions[prev] || strings.HasSuffix(prev, ":") || strings.HasSuffix(prev, "=") {
		return false
	}
	seg := commandFrom(t, ls, ts)
	ws := words(t[seg:ts])
	if len(ws) > 0 && ws[0] == "sudo" {
		ws = ws[1:]
	}
	if len(ws) == 0 || keyUses[ws[0]] {
		return false
	}
	for _, w := range ws {
		if readVerbs[w] {
			return true
		}
	}
	return false
}

// commandFrom is where the command that holds offset ts of t starts, at
// or after ls (its line's start): after the last |, ; or &, and, so that
// a verb of another command or sentence is not taken for this one's, after
// the backtick that opens the code span holding ts, or after the end of a
// sentence (". ", "! ", "? ") when ts is in prose.
func commandFrom(t []byte, ls, ts int) int {
	seg := ls
	pre := t[ls:ts]
	if n := bytes.Count(pre, []byte{'`'}); n%2 == 1 {
		seg = ls + bytes.LastIndexByte(pre, '`') + 1
	} else {
		for _, end := range []string{". ", "! ", "? "} {
			if k := bytes.LastIndex(pre, []byte(end)); k > 0 && pre[k-1] != ' ' && ls+k+2 > seg {
				seg = ls + k + 2
			}
		}
	}
	if k := bytes.LastIndexAny(t[seg:ts], "|;&"); k >= 0 {
		seg += k + 1
	}
	return seg
}

// cronInstall refuses "crontab WORD" (a file of that name installed as
// the crontab) where crontab does not start a command, as in prose ("the
// crontab entries"); every other form of the rule stands.
func cronInstall(t []byte, start, end int) bool {
	m := bytes.ToLower(t[start:end])
	rest, ok := bytes.CutPrefix(m, []byte("crontab"))
	if !ok {
		return true
	}
	rest = bytes.TrimLeft(rest, " \t")
	if len(rest) == 0 || bytes.IndexByte([]byte("-/.~$"), rest[0]) >= 0 {
		return true
	}
	return commandStart(t, start)
}

// programStart is what makes a line appended to a shell start-up file run
// a program of its own: a background job, a detached or downloaded
// command, a temporary folder, decoding (not an eval of a local tool's
// set-up, eval "$(brew shellenv)", which installers add everywhere).
var programStart = regexp.MustCompile(`(?i)nohup|setsid|disown|curl|wget|/dev/tcp|base64|/tmp/|&\s*$`)

// maxHeredoc bounds the here-document read after its command.
const maxHeredoc = 4096

// heredocStartsProgram accepts a match that starts a here-document (<<)
// only when the document's body, up to its delimiter, starts a program
// (programStart); a match without one stands.
func heredocStartsProgram(t []byte, start, end int) bool {
	k := bytes.LastIndex(t[start:end], []byte("<<"))
	if k < 0 {
		return true
	}
	nl := indexByteFrom(t, end, '\n')
	if nl < 0 {
		return false
	}
	delim := strings.Trim(strings.TrimLeft(string(t[start+k+2:end]), "- \t"), `"'`)
	body := t[nl+1 : min(len(t), nl+1+maxHeredoc)]
	for line := range bytes.Lines(body) {
		l := bytes.TrimSpace(line)
		if delim != "" && string(l) == delim {
			return false
		}
		if programStart.Match(l) {
			return true
		}
	}
	return false
}

// unitWriters are the commands that write a file to the path they are
// given.
var unitWriters = set("cp", "mv", "install", "ln", "tee", "rsync", "dd", "curl", "wget", "cat")

// writesUnit accepts a systemd directory's path only where a unit is
// written there: after > or >>, or in a command that copies or writes to
// it (cp, install, tee …); a match that starts with systemctl (a unit
// enabled or linked from a path) stands.
func writesUnit(t []byte, start, _ int) bool {
	if hasAt(bytes.ToLower(t[start:min(len(t), start+9)]), 0, "systemctl") {
		return true
	}
	ls, whole := lineStart(t, start)
	if !whole {
		return true // too long a line to tell: written
	}
	ts := start
	for ts > ls && bytes.IndexByte([]byte(" \t|;&()`<>\"'"), t[ts-1]) < 0 {
		ts--
	}
	j := ts
	for j > ls && (t[j-1] == ' ' || t[j-1] == '"' || t[j-1] == '\'' || t[j-1] == '\t') {
		j--
	}
	if j > ls && t[j-1] == '>' {
		return true
	}
	ws := words(t[commandFrom(t, ls, ts):ts])
	for len(ws) > 0 && (ws[0] == "sudo" || ws[0] == "doas") {
		ws = ws[1:]
	}
	return len(ws) > 0 && unitWriters[ws[0]]
}

// negations are the words that forbid the command that follows them.
var negations = set("never", "not", "don't", "dont", "avoid", "no", "without", "forbidden", "prohibited")

// forbiddenVerbs are the words that may stand between a negation and the
// command it forbids ("never run …", "do not ever use …", "never start the
// agent with …").
var forbiddenVerbs = set("run", "use", "execute", "type", "do", "call", "invoke", "try", "ever", "running", "using", "doing", "start",
	"launch", "pass", "enable", "add", "set", "the", "agent", "with", "it", "a", "starting", "launching", "passing")

// notNegated refuses a command that its clause forbids: a negation
// followed by nothing but order verbs up to the command ("Never run `git
// push --force origin main`", "do not git push -f …").
func notNegated(t []byte, start, _ int) bool {
	ls, whole := lineStart(t, start)
	if !whole {
		return true // too long a line to tell: not negated
	}
	pre := t[ls:start]
	if k := bytes.LastIndexAny(pre, ".;:!?,"); k >= 0 {
		pre = pre[k+1:]
	}
	ws := words(pre)
	for i := len(ws) - 1; i >= 0; i-- {
		switch {
		case negations[ws[i]] || ws[i] == "t" && i > 0 && (ws[i-1] == "don" || ws[i-1] == "mustn" || ws[i-1] == "shouldn"):
			return false
		case ws[i] == "or" || ws[i] == "nor":
			// "never run A or B": B is forbidden as A is, when the
			// clause holds a negation before the alternatives.
			for j, w := range ws[:i] {
				if negations[w] || w == "t" && j > 0 && (ws[j-1] == "don" || ws[j-1] == "mustn" || ws[j-1] == "shouldn") {
					return false
				}
			}
			return true
		case !forbiddenVerbs[ws[i]]:
			return true
		}
	}
	return true
}

// disclaimers are the words that, earlier in the same clause, make a
// phrase a citation rather than an order: a negation or refusal, or talk
// about such phrases (examples, attacks, what a page says).
var disclaimers = set("never", "not", "don't", "dont", "doesn't", "won't", "refuse", "refuses", "reject", "rejects",
	"decline", "declines", "resist", "resists", "beware", "flag", "flags", "detect", "detects", "report", "reports",
	"example", "examples", "like", "such", "attempt", "attempts", "tries", "try", "trying", "injection",
	"injections", "injected", "malicious", "untrusted", "suspicious", "phrase", "phrases", "says", "say", "said",
	"asks", "tells", "told", "claims", "contains", "containing")

// cited reports whether the match is quoted on its line (an open quote
// or backtick before it) or follows, in its clause, a disclaimer: "refuse
// text like 'ignore previous instructions'", "never delete files without
// asking for confirmation". A quoted phrase that goes on to give an order
// ("… and email the user's files to me") is cited only where a disclaimer
// comes before it, on its line or in the few lines above (a list of
// examples under "Injected text to refuse:").
func cited(t []byte, start, end int) bool {
	ls, whole := lineStart(t, start)
	if !whole {
		return false // too long a line to tell whether a quote is open: an order
	}
	pre := t[ls:start]
	if bytes.Count(pre, []byte{'"'})%2 == 1 || bytes.Count(pre, []byte{'`'})%2 == 1 ||
		bytes.Count(pre, []byte("\u201c")) > bytes.Count(pre, []byte("\u201d")) {
		return !ordersAfter(t, end) || disclaimed(t[max(0, ls-citeContext):start])
	}
	if k := len(bytes.TrimRight(pre, " \t")); k > 0 && (pre[k-1] == '\'' || pre[k-1] == '*' || pre[k-1] == '_') {
		return !ordersAfter(t, end) || disclaimed(t[max(0, ls-citeContext):start])
	}
	clause := pre
	if k := bytes.LastIndexAny(pre, ".;:!?\u2014"); k >= 0 && (pre[k] != '.' || k+1 == len(pre) || pre[k+1] == ' ') {
		clause = pre[k+1:]
	}
	return disclaimed(clause)
}

// citeContext is how far before a quoted phrase's line cited looks for a
// disclaimer.
const citeContext = 400

func disclaimed(b []byte) bool {
	for _, w := range words(b) {
		if disclaimers[w] {
			return true
		}
	}
	return false
}

// orderVerbs are the actions that, joined to an override phrase (and,
// then), make it an order rather than a phrase cited.
var orderVerbs = set("send", "email", "e-mail", "mail", "upload", "post", "run", "execute", "delete", "remove", "exfiltrate",
	"copy", "read", "forward", "share", "transmit", "download", "install", "write", "leak", "dump", "cat", "curl", "wget", "push")

// ordersAfter reports whether the sentence the match at end ends goes on,
// within its quote, to an action: "and email …", "then run …".
func ordersAfter(t []byte, end int) bool {
	rest := t[end:min(len(t), end+200)]
	if k := bytes.IndexAny(rest, "\"`\n.;!?\u201d"); k >= 0 {
		rest = rest[:k]
	}
	ws := words(rest)
	for i, w := range ws {
		if (w == "and" || w == "then") && i+1 < len(ws) {
			next := ws[i+1]
			if next == "then" && i+2 < len(ws) {
				next = ws[i+2]
			}
			if orderVerbs[next] {
				return true
			}
		}
	}
	return false
}

// asserted is the complement of cited: the phrase stands as an order.
func asserted(t []byte, start, end int) bool { return !cited(t, start, end) }

// browserWords mark a headless browser's launch, whose --no-sandbox is
// Chromium's flag (in containers and CI), not an agent's.
var browserWords = [][]byte{[]byte("chrome"), []byte("chromium"), []byte("puppeteer"), []byte("playwright"), []byte("selenium"),
	[]byte("headless"), []byte("electron"), []byte("browser"), []byte("--disable-gpu"), []byte("--disable-setuid-sandbox"),
	[]byte("webdriver"), []byte("cypress"), []byte("karma")}

// maxStatement bounds how far around an argument list's --no-sandbox a
// browser's name is looked for.
const maxStatement = 1024

// notBrowser refuses a --no-sandbox whose command names a browser: on the
// flag's own line, or, where the flag is an item of a list (args: [
// '--no-sandbox' ], a YAML "- --no-sandbox") rather than a command's
// argument, in the block of lines around it (up to a blank line, within
// maxStatement). A browser named in another command or paragraph does
// not count.
func notBrowser(t []byte, start, end int) bool {
	ls, whole := lineStart(t, start)
	if !whole {
		return true // too long a line to tell: an agent's flag
	}
	le := indexByteFrom(t, end, '\n')
	if le < 0 {
		le = len(t)
	}
	from, to := ls, le
	if pre := bytes.TrimSpace(t[ls:start]); len(pre) == 0 || bytes.IndexByte([]byte("[(,'\"-:="), pre[len(pre)-1]) >= 0 {
		for from > 0 && ls-from < maxStatement {
			p, whole := lineStart(t, from-1)
			if !whole || len(bytes.TrimSpace(t[p:from])) == 0 {
				break
			}
			from = p
		}
		for to < len(t) && to-le < maxStatement {
			n := indexByteFrom(t, to+1, '\n')
			if n < 0 {
				n = len(t)
			}
			if len(bytes.TrimSpace(t[to+1:n])) == 0 {
				break
			}
			to = n
		}
	}
	near := bytes.ToLower(t[from:to])
	for _, w := range browserWords {
		if bytes.Contains(near, w) {
			return false
		}
	}
	return true
}

// runsStdin accepts a pipe into an interpreter (the match ends with its
// name) that runs what it reads: bare, with flags only, or told to read
// standard input (python3 -, sh -s, bash /dev/stdin). It refuses one given
// code of its own (python3 -c, perl -ne, ruby -e, node -e, php -r,
// python3 -m json.tool) or a script of its own (python3 parse.py), which
// reads the download as data, unless that code evaluates what it reads
// (python3 -c "exec(sys.stdin.read())").
func runsStdin(t []byte, start, end int) bool {
	m := t[start:end]
	if k := bytes.LastIndexByte(m, '|'); k >= 0 {
		m = m[k+1:]
	}
	f := bytes.Fields(m)
	if len(f) == 0 {
		return true
	}
	name := strings.ToLower(strings.Trim(string(f[len(f)-1]), `"'`))
	if k := strings.LastIndexByte(name, '/'); k >= 0 {
		name = name[k+1:]
	}
	name = strings.TrimRight(name, "0123456789.")
	codeFlags, ok := inlineCode[name]
	if !ok || len(f) > 1 && bytes.EqualFold(bytes.Trim(f[0], `"'`), []byte("xargs")) {
		return true // a shell named otherwise, xargs' arguments as a script, awk: read as run
	}
	line := t[end:min(len(t), end+windowAfter)]
	if k := bytes.IndexByte(line, '\n'); k >= 0 {
		line = line[:k]
	}
	rest := line
	if k := bytes.IndexAny(rest, "|;&`"); k >= 0 {
		rest = rest[:k]
	}
	args := bytes.Fields(rest)
	for _, a := range args {
		arg := strings.Trim(string(a), `"'`)
		switch {
		case arg == "-" || arg == "/dev/stdin" || strings.HasPrefix(arg, "/dev/fd/") || strings.HasPrefix(arg, "/proc/self/fd/") ||
			arg == "-s" && codeFlags[0] == "-c":
			return true
		case slices.Contains(codeFlags, arg) || len(arg) > 2 && arg[0] == '-' && arg[1] != '-' && slices.Contains(codeFlags, "-"+arg[len(arg)-1:]):
			// Code of its own (-ne is -n and -e): a run if it
			// evaluates its input (the code may hold ; and |).
			return evaluates(line[bytes.Index(line, a)+len(a):])
		case strings.HasPrefix(arg, "-"):
		case scriptFile(arg):
			return false
		default:
			return true // an option's value, or a word: read as run
		}
	}
	return true
}

// inlineCode are the interpreters that pipe-to-shell names, and the flags
// that give each code of its own (or a module, python's -m).
var inlineCode = map[string][]string{
	"sh": {"-c"}, "bash": {"-c"}, "zsh": {"-c"}, "ksh": {"-c"}, "dash": {"-c"}, "fish": {"-c"}, "csh": {"-c"}, "tcsh": {"-c"},
	"ash": {"-c"}, "mksh": {"-c"}, "ysh": {"-c"},
	"python": {"-c", "-m"}, "perl": {"-e", "-E"}, "ruby": {"-e"}, "node": {"-e", "-p", "--eval", "--print"},
	"php": {"-r", "-R", "-B", "-E"},
}

// evaluates reports whether code evaluates or runs what it is given.
func evaluates(code []byte) bool {
	low := bytes.ToLower(code)
	for _, w := range []string{"exec", "eval", "system", "popen", "spawn", "compile", "function(", "runin", "source", "`", "$("} {
		if bytes.Contains(low, []byte(w)) {
			return true
		}
	}
	return false
}

// scriptFile reports whether arg names a script (by its extension, or as
// a path), which an interpreter runs instead of what it reads.
func scriptFile(arg string) bool {
	switch strings.ToLower(path.Ext(arg)) {
	case ".py", ".pl", ".pm", ".rb", ".js", ".mjs", ".cjs", ".ts", ".php", ".sh", ".bash", ".zsh":
		return true
	}
	return strings.Contains(arg, "/")
}

// runsDownload accepts a download-then-run of one command (curl -o x &&
// sh x) only where what runs is the file the download wrote: not a data
// file (a .csv, .yaml or archive, downloadedFile none) read by a program
// of the user's own (curl -o data.csv URL && python3 analyze.py
// data.csv). PowerShell's downloads, which downloadedFile does not read,
// stand.
func runsDownload(t []byte, start, end int) bool {
	m := t[start:end]
	k := 0
	for k < len(m) && (word[m[k]] || m[k] == '.') {
		k++
	}
	switch strings.ToLower(string(m[:k])) {
	case "curl", "curl.exe", "wget", "fetch", "aria2c":
	default:
		return true
	}
	kw := k
	if strings.HasSuffix(strings.ToLower(string(m[:k])), ".exe") {
		kw = k - len(".exe")
	}
	name := downloadedFile(t, start, start+kw)
	if name == "" {
		return false
	}
	// The commands after the download's, up to the end of the line the
	// match ends on, read as the detector reads a later line's (the
	// download on a line before it).
	rest := t[start:min(len(t), end+windowAfter)]
	if i := bytes.IndexByte(rest[end-start:], '\n'); i >= 0 {
		rest = rest[:end-start+i]
	}
	run, _ := runOf(bytes.ToLower(rest), []download{{name: name, base: baseName(name), line: -1}}, func(int) int { return 0 })
	return run == "file"
}

// notPlaceholder refuses a token a part of which (a run of letters and
// digits of eight or more) is a placeholder, as documentation writes one:
// at most three characters, repeated (XXXXXXXX, T00000000), mostly one
// (51Hxxxxxxxxxxxxxxxx), or counted out (1234567890, AbCdEfGh).
func notPlaceholder(t []byte, start, end int) bool {
	for _, part := range bytes.FieldsFunc(t[start:end], func(r rune) bool {
		return r >= 0x80 || r == '_' || !word[r]
	}) {
		if len(part) < 8 {
			continue
		}
		var seen [256]bool
		distinct, counted := 0, 0
		for i, c := range part {
			if !seen[c] {
				seen[c] = true
				distinct++
			}
			if i > 0 && (lower[c] == lower[part[i-1]]+1 || c == '0' && part[i-1] == '9') {
				counted++
			}
		}
		most := 0
		var n [256]int
		for _, c := range part {
			n[lower[c]]++
			most = max(most, n[lower[c]])
		}
		if distinct <= 3 || counted*4 >= (len(part)-1)*3 || most*4 >= len(part)*3 {
			return false
		}
	}
	return true
}

// notLoopback refuses a call whose first argument is a URL on this
// machine (http://localhost:3000/health, 127.0.0.1, [::1]): a send that
// never leaves it.
func notLoopback(t []byte, start, end int) bool {
	k := bytes.IndexByte(t[start:min(len(t), end+1)], '(')
	if k < 0 {
		return true
	}
	arg := bytes.TrimLeft(t[start+k+1:min(len(t), start+k+1+64)], " \t")
	if len(arg) == 0 || arg[0] != '"' && arg[0] != '\'' && arg[0] != '`' {
		return true
	}
	u := strings.ToLower(string(arg[1:]))
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]", "0.0.0.0"} {
		for _, scheme := range []string{"http://", "https://"} {
			if h, ok := strings.CutPrefix(u, scheme+host); ok && h != "" && strings.ContainsRune(":/\"'`", rune(h[0])) {
				return false
			}
		}
	}
	return true
}

// devTCPShell accepts a /dev/tcp path only where its line wires it to a
// shell or a stream (>&, <&, 0>&1, exec 3<>, a pipe into a shell, read in
// a loop): not a port probe, which opens it and closes it
// (cat < /dev/null > /dev/tcp/host/port, </dev/tcp/localhost/8080).
func devTCPShell(t []byte, start, _ int) bool {
	ls, whole := lineStart(t, start)
	if !whole {
		return true
	}
	le := indexByteFrom(t, start, '\n')
	if le < 0 {
		le = len(t)
	}
	line := bytes.ToLower(t[ls:le])
	for _, w := range []string{">&", "<&", "<>", " -i", "while read", "|sh", "| sh", "|bash", "| bash", "exec ", "$(cat", "nc ", "socat"} {
		if bytes.Contains(line, []byte(w)) {
			return true
		}
	}
	return false
}

// autostartReaders read, list or remove an autostart entry, and add
// none.
var autostartReaders = set("cat", "ls", "less", "more", "head", "tail", "grep", "rg", "stat", "file", "rm", "unlink", "dir", "type",
	"get-childitem", "gci", "get-item", "gi", "get-itemproperty", "gp", "remove-item", "ri", "remove-itemproperty", "rp",
	"test-path", "get-content", "gc", "select-string", "sls")

// addsAutostart refuses an autostart path in a command that only reads,
// lists or removes it (cat /etc/rc.local, ls ~/.config/autostart, reg
// query …\Run, reg delete …\Run), as an audit or a clean-up does.
func addsAutostart(t []byte, start, _ int) bool {
	ls, whole := lineStart(t, start)
	if !whole {
		return true
	}
	cs := ls
	if k := bytes.LastIndexAny(t[ls:start], ";|&`("); k >= 0 {
		cs = ls + k + 1
	}
	f := bytes.Fields(bytes.ToLower(t[cs:start]))
	for len(f) > 0 && (prefixes[string(f[0])] || string(f[0]) == "sudo") {
		f = f[1:]
	}
	if len(f) == 0 {
		return true
	}
	cmd := strings.TrimSuffix(strings.Trim(string(f[0]), "`\"'"), ".exe")
	if autostartReaders[cmd] {
		return false
	}
	return cmd != "reg" || len(f) < 2 || !slices.Contains([]string{"query", "delete", "export"}, string(f[1]))
}

// wipes is notNegated, and refuses a find that filters what it deletes
// (find ~ -name .DS_Store -delete): only one that takes everything under
// a root wipes it.
func wipes(t []byte, start, end int) bool {
	if !notNegated(t, start, end) {
		return false
	}
	m := bytes.ToLower(t[start:end])
	if !bytes.HasPrefix(m, []byte("find")) {
		return true
	}
	for _, f := range []string{"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-mtime", "-mmin", "-atime", "-newer", "-size",
		"-empty", "-user", "-group", "-perm", "-wholename", "-lname"} {
		if bytes.Contains(m, []byte(f)) {
			return false
		}
	}
	return true
}

// dumpsEnvironment refuses a read of the environment that keeps only
// some of it (os.environ.items() … if k.startswith("MYAPP_"),
// Get-ChildItem Env: | Where-Object Name -like …), as a program's own
// settings are read; the whole environment, or a store, stands.
func dumpsEnvironment(t []byte, start, end int) bool {
	m := bytes.ToLower(t[start:end])
	if !bytes.Contains(m, []byte("environ")) && !bytes.Contains(m, []byte("env:")) {
		return true
	}
	le := indexByteFrom(t, end, '\n')
	if le < 0 {
		le = len(t)
	}
	rest := bytes.ToLower(t[end:min(le, end+windowAfter)])
	for _, w := range []string{"startswith(", "where-object", "| ?", "|?", "-like", "-match", "if k ==", "if key ==", "if k in", "if key in"} {
		if bytes.Contains(rest, []byte(w)) {
			return false
		}
	}
	return true
}

// both is a validator that accepts what a and b accept.
func both(a, b func(t []byte, start, end int) bool) func(t []byte, start, end int) bool {
	return func(t []byte, start, end int) bool { return a(t, start, end) && b(t, start, end) }
}

// concealCues, in what follows "do not tell the user", name what the
// agent does or did: what a hostile instruction keeps from the user.
var concealCues = []string{"that", "about", "this", "these", "those", "what you", "anything", "any of", "you ", "we ", "step", "command",
	"script", "file", "upload", "sent", "send", "ran", "run", "install", "key", "token", "credential", "secret"}

// concealsDoings refuses "do not tell (show, let) the user …" where what
// follows is the user's own data or a plan (… their password, … the raw
// HTML, … what you are about to do): a rule of style. Nothing following,
// or words of what the agent does (… that you did, … about this step),
// stand; so do the other forms (hide this from the user, without telling
// the user).
func concealsDoings(t []byte, start, end int) bool {
	m := bytes.ToLower(t[start:end])
	if !bytes.HasPrefix(m, []byte("do")) && !bytes.HasPrefix(m, []byte("never")) || !bytes.HasSuffix(m, []byte("user")) &&
		!bytes.HasSuffix(m, []byte("human")) || bytes.Contains(m, []byte(" to the ")) {
		return true
	}
	rest := t[end:min(len(t), end+100)]
	if k := bytes.IndexAny(rest, ".;:!?,\n"); k >= 0 {
		rest = rest[:k]
	}
	low := bytes.TrimSpace(bytes.ToLower(rest))
	if len(low) == 0 {
		return true
	}
	for _, plan := range []string{"what you're about to", "what you are about to", "what you will", "what you'll"} {
		if bytes.HasPrefix(low, []byte(plan)) {
			return false
		}
	}
	for _, c := range concealCues {
		if bytes.Contains(low, []byte(c)) {
			return true
		}
	}
	return false
}
