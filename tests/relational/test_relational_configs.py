"""The example relational configs generate on the shared datasets: row counts, feature counts, and a few
features recomputed with pandas from the raw files."""

import pandas as pd
import pytest

from spark_fr.relational import generate_features
from tests.paths import ROOT

CONF = ROOT / "conf" / "relational"


@pytest.mark.parametrize("engine", ["local"])
def test_financial(spark, datasets, engine):
    """Financial's features against pandas, from the local engine; the Spark engine gives the same features to the
    bit (tests/relational/test_relational_local.py::test_financial_identical), so it is not run again here."""
    g = generate_features(spark, str(CONF / "financial.yaml"), engine=engine)
    assert g.engine == engine
    pdf = (g.frame.toPandas() if engine == "spark" else g.pandas).set_index("loan_id")
    assert len(pdf) == 682 and pdf.index.is_unique
    assert 100 <= len(g.features) <= 400
    tables = {lin.table for lin in g.lineage}
    assert tables == {"loan", "account", "client", "disp", "card", "order", "district"}
    fin = datasets / "rel_financial_pkdd99"
    loan = pd.read_csv(fin / "fin_loan.tsv", sep="\t", header=None,
                       names=["loan_id", "account_id", "granted_date", "amount", "duration", "payments", "status"])
    order = pd.read_csv(fin / "fin_order.tsv", sep="\t", header=None, keep_default_na=False,
                        names=["order_id", "account_id", "bank_to", "account_to", "amount", "category"])
    mean = order.groupby("account_id").amount.mean()
    count = order.groupby("account_id").size()
    hh = order[order.category == "HH"].groupby("account_id").amount.sum()
    for _, row in loan.iterrows():
        got = pdf.loc[float(row.loan_id)]
        want_mean = mean.get(row.account_id)
        assert (pd.isna(got["account__order__amount__mean"]) if want_mean is None
                else got["account__order__amount__mean"] == pytest.approx(want_mean))
        assert got["account__order__count"] == count.get(row.account_id, 0)
        want_hh = hh.get(row.account_id)
        assert (pd.isna(got["account__order__amount__sum__category_HH"]) if want_hh is None
                else got["account__order__amount__sum__category_HH"] == pytest.approx(want_hh))
        assert got["status"] == row.status and got["amount"] == pytest.approx(row.amount)


def test_mutagenesis(spark, datasets):
    g = generate_features(spark, str(CONF / "mutagenesis.yaml"))
    pdf = g.frame.toPandas()
    assert len(pdf) == 188 and pdf.molecule_id.is_unique
    assert pdf.mutagenic.value_counts().to_dict() == {"1": 125, "0": 63}  # declared nominal: class labels
    assert 100 <= len(g.features) <= 400
    import json

    molecules = json.loads((datasets / "rel_mutagenesis188" / "data.json").read_text())
    by_logp = {(m["logp"], m["lumo"], len(m["atoms"])): m for m in molecules}
    assert sorted(pdf.atom__count) == sorted(len(m["atoms"]) for m in molecules)
    for _, row in pdf.iterrows():
        m = by_logp[(row.logp, row.lumo, row.atom__count)]
        assert row.atom__charge__mean == pytest.approx(sum(a["charge"] for a in m["atoms"]) / len(m["atoms"]))
        assert row.atom__bond__count__mean == pytest.approx(sum(len(a["bonds"]) for a in m["atoms"]) / len(m["atoms"]))
