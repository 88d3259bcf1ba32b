#!/usr/bin/env python3
"""How often words occur in implementation configs: the `word_frequency`
table of rules/policy/signals.yaml, which the policy prefilter uses to look
for the rarest word of each pattern first.

Usage: scripts/word_frequency.py CORPUS_DIR < words.txt

words.txt holds the candidate words (the words of the policy patterns'
literals, white-space separated). Prints the percent of config files
(by the extensions of signals.yaml's config_files) that hold each word in
normal form (camelCase split, lower case), most frequent first, for words
in 1% of files or more.
"""
import os
import re
import sys

EXTS = {"sh", "bash", "env", "sub", "yaml", "yml", "json", "toml", "ini", "cfg", "conf", "gin"}


def words_of(b: bytes) -> set:
    s = re.sub(rb"([a-z0-9])([A-Z])", rb"\1_\2", b)
    s = re.sub(rb"([A-Z])([A-Z][a-z])", rb"\1_\2", s)
    return set(re.split(rb"[^a-z0-9]+", s.lower()))


def main() -> None:
    root = sys.argv[1]
    wanted = set(sys.stdin.read().split())
    counts = {w: 0 for w in wanted}
    files = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.rsplit(".", 1)[-1].lower() not in EXTS:
                continue
            try:
                with open(os.path.join(dirpath, name), "rb") as f:
                    found = words_of(f.read())
            except OSError:
                continue
            files += 1
            for w in wanted:
                if w.encode() in found:
                    counts[w] += 1
    print(f"# {files} config files")
    for w, c in sorted(counts.items(), key=lambda x: (-x[1], x[0])):
        if files and c / files >= 0.01:
            print(f"{w}: {round(100 * c / files, 1)}")


if __name__ == "__main__":
    main()
