"""What grader/nbgrader_config.py names: nbgrader's preprocessors, plugins, exchange classes and
template filters, and the hidden inputs the hooks hand to the sandbox."""
