"""Customer sign-in: each company's OAuth 2.1 authorization server, under
``/v1/{tenantKey}/oauth``."""
