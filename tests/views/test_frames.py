import numpy as np
import pandas as pd

from kvviz.views.frames import no_none


def test_missing_cells_read_as_a_dash_and_full_columns_keep_their_type():
    df = pd.DataFrame({"kernel": ["a", "b"], "us": [1.5, 2.0], "graph_us": [None, 3.0], "x": [np.nan, np.nan]})
    out = no_none(df)
    assert out["graph_us"].tolist() == ["—", "3"] and out["x"].tolist() == ["—", "—"]
    assert out["us"].dtype == float and out["kernel"].tolist() == ["a", "b"]
    assert not out.isna().any().any() and df["graph_us"].isna().any()      # the input is not changed
