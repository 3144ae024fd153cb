-- A retried insert is stored once. Each insert carries an `insert_deduplication_token`
-- derived from the ids of its rows (collector/store.py); a single-node table remembers
-- the tokens of its last 1000 inserts and skips a block it has already stored. Replicated
-- tables (a cluster) deduplicate by themselves, so the cluster rendering leaves these out.
ALTER TABLE {db}.spans MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.turns MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.turn_versions MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.findings MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.reviews MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.alerts MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {db}.alert_deliveries MODIFY SETTING non_replicated_deduplication_window = 1000
