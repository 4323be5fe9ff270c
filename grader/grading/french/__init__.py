"""How the class tools speak French: arguments, dates, spreadsheet CSV (kept inert), errors."""
