#!/bin/sh
# A reviewer forked by coordinate.sh: its inbox holds the coordinator's last two requests.
actors inbox   # what the coordinator was asked, oldest first
