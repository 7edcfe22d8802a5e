"""Serving the graphs: to LangGraph Studio and the LangGraph API (:mod:`.served`, what
``langgraph.json`` names), as OpenAI-compatible chat models (:mod:`.openai_api`, its requests
and runs), and the durable threads both keep (:mod:`.checkpoints`)."""
