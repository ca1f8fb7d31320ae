#!/bin/sh
# One Run per file of docs/ (the Runs queue behind the parent's --max-parallel): docs/trees-and-wait.md.
for file in "$(dirname "$0")"/../*.md; do
  actors run --name "review-$(basename "$file" .md)" -- wc -l "$file" >/dev/null
done
actors wait >/dev/null   # inside a Run: its descendants
