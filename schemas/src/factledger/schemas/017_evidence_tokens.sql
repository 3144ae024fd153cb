-- What a verdict rests on, token by token. In findings, Real holds the real identifiers
-- the tools returned that a finding was compared with (a fabricated key's nearest real key,
-- the names of a class-5 set a tool result shows) and the call that returned each; in
-- turn_evidence, Backings holds each identifier of the reply a tool result backs, at
-- [SpanStart, SpanEnd) of the stored (redacted) reply, and the call whose result holds it.
-- Empty for rows written before these columns.
ALTER TABLE {db}.findings ADD COLUMN IF NOT EXISTS Real Nested(Token String, Tool String, CallId String);
ALTER TABLE {db}.turn_evidence ADD COLUMN IF NOT EXISTS Backings Nested(Token String, SpanStart Int32, SpanEnd Int32, Tool String, CallId String)
