"""The long-format leaderboard loader: a small fixture reads; bad dumps get errors naming the problem."""

import pandas as pd
import pytest

from repro.data.leaderboard import load_leaderboard

FIXTURE = """model,dataset,metric,value,higher_is_better,dataset_desp
llama-7b,gsm8k,accuracy,0.41,true,grade-school math
qwen-7b,gsm8k,accuracy,0.55,true,grade-school math
llama-7b,wmt,bleu,21.0,true,translation
qwen-7b,wmt,bleu,25.5,true,translation
llama-7b,wikitext,perplexity,8.1,false,language modelling
qwen-7b,wikitext,perplexity,7.3,false,language modelling
"""


def _write(tmp_path, text):
    path = tmp_path / "dump.csv"
    path.write_text(text)
    return path


def test_fixture_reads_into_groups(tmp_path):
    records, groups = load_leaderboard(_write(tmp_path, FIXTURE))
    assert len(records) == 6 and set(records.group) == {"gsm8k|accuracy", "wmt|bleu", "wikitext|perplexity"}
    assert groups.set_index("metric").higher_is_better.to_dict() == {"accuracy": True, "bleu": True, "perplexity": False}
    assert "dataset_desc" in records.columns                 # the reference's dataset_desp is accepted


def test_missing_column_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"missing column\(s\) \['value'\]"):
        load_leaderboard(_write(tmp_path, "model,dataset,metric\nm,d,acc\n"))


def test_mixed_directions_are_refused(tmp_path):
    bad = FIXTURE + "mistral-7b,gsm8k,accuracy,0.3,false,grade-school math\n"
    with pytest.raises(ValueError, match="'accuracy' is listed with mixed directions"):
        load_leaderboard(_write(tmp_path, bad))


def test_unknown_direction_and_bad_value(tmp_path):
    with pytest.raises(ValueError, match="'zorp' has unknown direction"):
        load_leaderboard(_write(tmp_path, "model,dataset,metric,value\nm,d,zorp,1.0\n"))
    with pytest.raises(ValueError, match="row 2 has value"):
        load_leaderboard(_write(tmp_path, "model,dataset,metric,value\nm,d,accuracy,n/a\n"))
    # without a direction column, known metric names carry their direction
    _, groups = load_leaderboard(_write(tmp_path, "model,dataset,metric,value\nm,d,wer,0.1\nn,d,wer,0.2\n"))
    assert not groups.higher_is_better.iloc[0]
    assert isinstance(groups, pd.DataFrame)
