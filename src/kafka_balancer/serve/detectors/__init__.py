"""One module per anomaly type. Each ``detect`` is a pure function of what was observed (the topology of
one sampling round, or the load model's metrics of one window) to a list of findings; how long a
finding must persist before it is confirmed is the anomaly book's business (``serve/book.py``)."""
