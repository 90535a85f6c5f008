"""What an operator watches: structured JSON logs and the access log (``logs``), the
Prometheus families (``metrics``) and their per-worker files, and throttled warnings.

May import: the root foundations and ``limits``.
"""
