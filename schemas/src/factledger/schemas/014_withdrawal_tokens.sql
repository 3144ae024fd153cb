-- Who withdrew a review: the fingerprint of the review token that asked
-- (collector/access.py `token_fingerprint`: `sha256:` and 12 hex digits, never the token),
-- beside the name the request gave in Reviewer. '' for an open API, and for rows written
-- before this column (nobody was asked for a token then).
ALTER TABLE {db}.review_withdrawals ADD COLUMN IF NOT EXISTS TokenId String AFTER Reviewer;
