"""The larger commands of ``qoslab``, one module each; ``qoslab.cli`` registers them on
its typer app, and ``common`` holds what they share."""
