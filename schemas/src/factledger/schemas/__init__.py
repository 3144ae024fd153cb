"""ClickHouse DDL as numbered idempotent .sql files."""
