"""What every layer stands on: messages, history, views, tokens, stores, the meter, protocols."""
