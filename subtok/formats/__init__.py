

def __getattr__(name: str):
    """``sentencepiece_to_json`` without importing the exporter up front."""
    if name == "sentencepiece_to_json":
        from subtok.formats.hf_export import sentencepiece_to_json
        return sentencepiece_to_json
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
