#!/usr/bin/env python3
"""Puts a benchmark's table into BENCHMARKS.md between its markers (appended under a title
when the markers are missing), with the date, the machine and the script that measured it.

    write_table.py TABLE FILE MARKER TITLE SCRIPT
"""
import datetime
import platform
import re
import sys

table, path, marker, title, script = sys.argv[1:6]
try:
    text = open(path).read()
except FileNotFoundError:
    text = "# Benchmarks\n"
start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
cpu = open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].splitlines()[0].strip()
stamp = f"Measured {datetime.date.today()} on {platform.machine()} ({cpu}), `{script}`."
block = f"{start}\n{stamp}\n\n{table}\n{end}"
if start in text and end in text:
    text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m: block, text, flags=re.S)
else:
    text = text.rstrip("\n") + f"\n\n## {title} — `{script}`\n\n" + block + "\n"
open(path, "w").write(text)
