"""Runs pyspark blocks as a user pastes them into the pyspark shell, with `spark` a Spark Connect session.

Usage: run_blocks.py sc://host:port blocks.json, where blocks.json is a list of {"file", "line", "source"}: each runs
in one namespace, in order, compiled under its file and line so that a traceback names the documentation's line. The
streaming queries still running at the end are stopped, also when a block failed.
"""

import json
import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
namespace = {"__name__": "__main__", "spark": spark}
try:
    with open(sys.argv[2]) as f:
        for block in json.load(f):
            source = "\n" * (block["line"] - 1) + block["source"]
            exec(compile(source, block["file"], "exec"), namespace)
finally:
    for query in spark.streams.active:
        query.stop()
