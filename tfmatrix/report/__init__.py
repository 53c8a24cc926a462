"""The report's views: the page (``build``), its sections, charts and tables, and the CSV/JSON files beside it."""
