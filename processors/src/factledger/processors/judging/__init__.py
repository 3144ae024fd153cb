"""Judging: spans in, assembled turns and verdicts out (`judging.core`), with the reasons
for what it sets aside named once (`judging.drops`).

Three runners drive the one core: the in-agent span processor (`processors.span_processor`),
and the service's turn processor, in its own thread or in judge worker processes
(`collector.judge.turn_judge`). Each only carries spans to it and verdicts away.

Nothing is imported here: the assembler imports `judging.drops`, and `judging.core`
imports the assembler.
"""
