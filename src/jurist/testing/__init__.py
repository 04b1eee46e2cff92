"""Offline testing aids: a loopback OpenAI-compatible server for judges with no provider."""

from jurist.testing.openai_server import Fault, OpenAICompatibleServer, closed_port_url, last_user_message

__all__ = ["Fault", "OpenAICompatibleServer", "closed_port_url", "last_user_message"]
