"""Finding and watching matches: the replay model, its text, SVG and HTML renderings."""
