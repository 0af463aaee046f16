"""One's own traffic: access logs read into a traffic model, and the schedule the engine replays."""
