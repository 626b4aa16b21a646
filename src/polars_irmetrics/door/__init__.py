"""The door: :func:`~polars_irmetrics.evaluate` parses the metrics once and routes each
to the wing that computes it; the specialised entry points are thin doors over it."""
