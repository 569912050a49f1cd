"""Opening SQLite databases the one way this project allows, and migrating them."""
