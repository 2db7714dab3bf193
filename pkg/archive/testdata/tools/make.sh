#!/bin/sh
# make.sh regenerates the archives in this directory: one skill tree packed
# by the tools people use (GNU tar, bsdtar, Python, Info-ZIP, git archive),
# so that the validator's policy is checked against what they really write.
# TestValidateRealTools names the outcome expected for each. Run it from this
# directory; it needs GNU tar, bsdtar, python3, zip and git.
set -eu
out=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
long=$(printf 'a-rather-long-file-name-%.0s' 1 2 3 4 5)x.md # 121 bytes: past ustar's 100

tree() { # $1: directory; $2: "links" to add symlinks, "ascii" for no non-ASCII names
	mkdir -p "$1/docs" "$1/scripts" "$1/links"
	printf -- '---\nname: tools\ndescription: Packed by a real tool.\n---\nHello.\n' >"$1/SKILL.md"
	echo guide >"$1/docs/guide.md"
	echo long >"$1/docs/$long"
	printf '#!/bin/sh\necho run\n' >"$1/scripts/run.sh"
	chmod 755 "$1/scripts/run.sh"
	if [ "${2:-}" != ascii ]; then echo cv >"$1/docs/résumé.md"; fi
	if [ "${2:-}" = links ]; then
		ln -s ../docs/guide.md "$1/links/guide"
		ln -s "../docs/$long" "$1/links/$long" # a long name and a long target
		ln "$1/docs/guide.md" "$1/docs/guide-again.md"
	else
		echo plain >"$1/links/none.md"
	fi
	find "$1" -exec touch -h -d '2024-01-02 03:04:05Z' {} +
}

tree "$work/t" links
tree "$work/z"
tree "$work/a" ascii
cd "$work/t"
tar --sort=name --owner=0 --group=0 --format=gnu -czf "$out/gnu-tar.tar.gz" .
tar --sort=name --owner=0 --group=0 --format=posix --pax-option=delete=atime,delete=ctime -czf "$out/gnu-tar-posix.tar.gz" .
tar --sort=name --owner=0 --group=0 --format=ustar -czf "$out/gnu-tar-ustar.tar.gz" SKILL.md docs/guide.md scripts
bsdtar -czf "$out/bsdtar.tgz" SKILL.md docs links scripts
python3 - "$out" <<'PY'
import os, sys, tarfile
for fmt, name in [(tarfile.PAX_FORMAT, "python-pax.tar.gz"), (tarfile.GNU_FORMAT, "python-gnu.tar.gz")]:
    with tarfile.open(os.path.join(sys.argv[1], name), "w:gz", format=fmt) as t:
        for f in sorted(os.listdir(".")):
            t.add(f)
PY
cd "$work/z"
python3 - "$out" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(os.path.join(sys.argv[1], "python.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in sorted(os.walk(".")):
        for f in sorted(files):
            z.write(os.path.join(root, f))
PY
bsdtar --format zip -cf "$out/bsdtar.zip" SKILL.md docs links scripts
bsdtar --format zip --options zip:compression=store -cf "$out/bsdtar-store.zip" SKILL.md docs links scripts
zip -q -X -r "$out/info-zip-utf8-unflagged.zip" SKILL.md docs links scripts
cd "$work/a"
zip -q -X -r "$out/info-zip.zip" SKILL.md docs links scripts
zip -q -X -r -0 - SKILL.md docs links scripts | cat >"$out/info-zip-streamed-store.zip"
cd "$work/z"
git init -q
git add .
GIT_AUTHOR_DATE='2024-01-02T03:04:05Z' GIT_COMMITTER_DATE='2024-01-02T03:04:05Z' \
	git -c user.name=t -c user.email=t@example.com commit -q -m tools
git archive --format=zip -o "$out/git-archive.zip" HEAD
git archive --format=tar.gz -o "$out/git-archive.tar.gz" HEAD
