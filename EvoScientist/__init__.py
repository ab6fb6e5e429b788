"""EvoScientist: a research agent served by ``langgraph dev``, with a final-answer
recovery route for WebUI streams that drop mid-run."""

__version__ = "0.1.0"
