"""Agent and session state in state.db: the kv_store of agent preferences (seed 000 §2)
and session variables such as ``current_task`` (seed 001 §2)."""
