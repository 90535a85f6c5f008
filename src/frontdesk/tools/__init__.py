"""Tool providers: where a company's tool calls are answered."""
