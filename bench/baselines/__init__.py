"""Servers the benchmark measures Frontdesk against, each serving the same ``echo`` tool."""
