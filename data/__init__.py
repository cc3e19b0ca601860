"""Instances shipped with dmlopt, found by name: ``dmlopt.load("tabgp/er12-p05-0")``."""
