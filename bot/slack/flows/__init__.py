"""The flows: what a request does once acknowledged, given only the parts it uses."""
