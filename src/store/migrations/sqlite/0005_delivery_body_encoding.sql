-- How a delivery's body is kept (see src/store/body.rs): 'zstd' for a zstd frame, 'identity'
-- for the body as it came, which every row written before this column is.
-- Keep this file and ../postgres/0005_delivery_body_encoding.sql saying the same thing.

ALTER TABLE deliveries ADD COLUMN body_encoding TEXT NOT NULL DEFAULT 'identity';
