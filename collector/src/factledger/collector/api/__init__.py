"""The query API (`/api/v1`): its routes, response models and the views of stored values."""
