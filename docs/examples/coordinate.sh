#!/bin/sh
# A coordinator that forks a reviewer per request asking for one (docs/trees-and-wait.md).
actors inbox --follow | while read -r request; do
  case "$request" in
    review*) actors run --fork=2 -- "$(dirname "$0")/review.sh" ;;   # lead.1, lead.2, ...
  esac
done
