"""How the class tools speak to a French teacher: arguments, dates, spreadsheets' CSV (formulas
kept inert), errors."""
