-- What a finding was compared with besides tools, or why with no tool ("no tool
-- results", "the turn's plan text"); CheckedAgainst then holds tool names only. NULL marks
-- a row written before this column: its note is still an entry of CheckedAgainst, and
-- readers split it out (collector/views.py). Rows written since hold '' for no note.
ALTER TABLE {db}.findings ADD COLUMN IF NOT EXISTS CheckedNote Nullable(String) AFTER CheckedAgainst;
