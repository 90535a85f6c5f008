"""How each company's tools are used: counted in each worker's memory as calls are answered
(``counters``), added to the database's hourly rollup every few seconds (``flushing``, into
store.tool_usage), and read back per tool over a range of hours (``report``).

Nothing is imported here: the MCP endpoint loads only ``counters``.

May import: the store and the foundations.
"""
