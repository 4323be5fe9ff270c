"""Running stock nbgrader over a class: starting a command, reading its log, the submissions to
grade and the grades to keep."""
