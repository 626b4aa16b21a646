"""Reading and writing: TREC run and qrels files, Parquet/CSV detection, report formats.

* :mod:`.trec`: TREC run and qrels readers and the run writer.
* :mod:`.files`: a run or judgments from any path the command line accepts.
* :mod:`.beir`: BEIR/MTEB folders (corpus, queries, judgments).
* :mod:`.report`: metric tables as text, CSV, JSON, Parquet and trec_eval lines.
"""
