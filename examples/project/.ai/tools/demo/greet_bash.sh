#!/usr/bin/env bash
# rye:signed:2026-11-23T12:23:12Z:5f9ef3c18072275e45f681097bd4f01816d2b7a05b29c110e73cc8fd54533a5d:MWdxqm_xlaXbtxwbZBalquBkmmAJpStGapKusdl7jHgcguoT5s1v2v-iOa1V5r8dJNZZ9Y7b3ECk91Xq5YYACA==:64205436039b7683
# Greets someone: a shell tool run by the bash/bash runtime.
# The runtime runs `/bin/bash greet_bash.sh <project_dir>` with the parameters as JSON on stdin;
# the JSON printed on stdout comes back as the result's `data`. The header below is plain shell.
__version__="1.0.0"
__tool_type__="bash"
__executor_id__="rye/core/runtimes/bash/bash"
__category__="demo"
__tool_description__="Greet someone (bash runtime)"

params=$(cat)
printf '{"greeting": "Hello from bash!", "runtime": "bash/bash", "project_path": "%s", "params": %s}\n' \
  "$1" "${params:-{\}}"
