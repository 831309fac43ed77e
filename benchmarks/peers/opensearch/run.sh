#!/bin/sh
# One OpenSearch node on 127.0.0.1, built once with Maven (Java 17+ and Maven needed):
#   benchmarks/peers/opensearch/run.sh --port 9201 [--data DIR] [--heap-mb 512]
exec python3 "$(dirname "$0")/node.py" "$@"
