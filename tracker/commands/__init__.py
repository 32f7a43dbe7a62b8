"""One module per ``tracker`` subcommand (``add_parser`` + ``run``)."""
