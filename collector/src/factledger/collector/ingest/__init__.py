"""The ingest stages behind the receiver, composed by `collector.pipeline.Pipeline`.

base        Ingest: what the receiver sees; the refusals `submit` raises
sink        RowSink, RecoveryReads: what the stages need of the store
memory      InMemoryStore: both, in memory, for tests
admission   Backlog: the bound in spans and request bytes
watermark   StoredMark: how far the write-ahead log is stored
writer      SpanWriter: accepted requests into the store
retry       InsertRetry, BatchHalving: acknowledged rows held through failures
recovery    Recovery: owed turns and late spans read back from the store
assembly    what waits for turn assembly (`collector.judge` takes it)
"""
