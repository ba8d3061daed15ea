"""Steps several programs share: responders, answerability routing, re-ranking, retries, conversations, routes."""
