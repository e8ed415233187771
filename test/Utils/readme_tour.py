#!/usr/bin/env python3
"""Runs the README's tour (the ```sh blocks under "## Tour") as written, from the
source root, with the tools of this build and a scratch directory for
/tmp: a command that stops working fails the test with its output.

    readme_tour.py README.md BIN_DIR SCRATCH_DIR
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path


def main():
    readme, bin_dir, scratch = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    scratch.mkdir(parents=True, exist_ok=True)
    lines = readme.read_text().splitlines()
    tour = lines.index("## Tour")
    end = next((i for i in range(tour + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    commands, at = [], tour
    while "```sh" in lines[at:end]:
        start = lines.index("```sh", at, end) + 1
        at = lines.index("```", start)
        commands += [line.split("  #")[0].strip() for line in lines[start:at] if line.strip()]
    if not commands:
        sys.exit("no command in the sh block of the README's tour")
    for command in commands:
        # Only paths as the README spells them (at a word's start), /tmp/
        # first: the checkout, and so the tools, may lie under /tmp.
        command = re.sub(r"(?<![\w/.])/tmp/", lambda _: str(scratch) + "/",
                         command)
        command = re.sub(r"(?<![\w/.])build/bin/",
                         lambda _: bin_dir.rstrip("/") + "/", command)
        run = subprocess.run(command, shell=True, cwd=readme.parent,
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"README command failed ({run.returncode}): {command}\n"
                     f"{run.stdout[-2000:]}{run.stderr[-2000:]}")
        print(f"ok: {shlex.split(command)[0].rsplit('/', 1)[-1]}")
    print(f"{len(commands)} README commands ran")


if __name__ == "__main__":
    main()
