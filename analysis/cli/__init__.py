"""The `sniff` command line: thin click commands over the library."""
