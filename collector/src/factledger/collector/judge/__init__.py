"""Judging stored spans into verdicts, for `collector.pipeline.Pipeline`.

base        Judging: the seam; FlushRequest; the turn processor loop
in_thread   ThreadJudging: in the turn-processor thread
workers     WorkerJudging: in judge worker processes, restarted when they die
hang_watch  HangWatch: kills a worker stuck where the turn time limit cannot reach
results     VerdictWriter: turn and finding rows into the store
"""
