"""SUNAR's nodes, one step of Algorithm 1 per module; ``ask``, ``gather``, ``confidence`` and
``respond`` are shared by every graph. A node is ``node(state, config) -> dict`` of the keys it
changes, wrapped by :func:`sunar.usage.node`."""
