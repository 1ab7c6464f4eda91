"""Solve an MPS model with gurobipy for the hybridlb solver (Java) and write the answer as JSON.

Usage: gurobi_bridge.py MODEL.mps PARAMS.json RESULT.json
PARAMS: {"maximize": bool, "timeLimit": s, "gap": g, "threads": n, "verbose": bool,
         "feasibilityTol": t, "intFeasTol": t (optional, Gurobi's defaults 1e-6 and 1e-5 otherwise),
         "start": {varName: value}}
RESULT: {"status": "optimal"|"time_limit"|"infeasible"|..., "objective", "bound",
         "values": {varName: value} (non-zero only), "version", "solutions",
         "feasibilityTol", "intFeasTol" (the tolerances Gurobi solved with)}
     or {"error": {"code": errno or "import", "message": text}} when Gurobi cannot be used.
gurobipy finds a full licence the usual way (GRB_LICENSE_FILE, ~/gurobi.lic, WLS) and otherwise
uses the size-limited licence bundled with the PyPI package.
"""
import json
import sys


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    mps, params_path, out_path = sys.argv[1:4]
    with open(params_path) as f:
        p = json.load(f)
    try:
        import gurobipy as gp
        from gurobipy import GRB
    except ImportError as e:
        write(out_path, {"error": {"code": "import", "message": "gurobipy is not installed (%s)" % e}})
        return
    try:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 1 if p.get("verbose") else 0)
        env.start()
        m = gp.read(mps, env)
        m.ModelSense = GRB.MAXIMIZE if p["maximize"] else GRB.MINIMIZE
        m.Params.TimeLimit = p["timeLimit"]
        m.Params.MIPGap = p["gap"]
        if p.get("threads"):
            m.Params.Threads = p["threads"]
        # the Java side's checkers allow 1e-9 over a row: it asks for that (Gurobi's minimum)
        if p.get("feasibilityTol"):
            m.Params.FeasibilityTol = p["feasibilityTol"]
        if p.get("intFeasTol"):
            m.Params.IntFeasTol = p["intFeasTol"]
        start = p.get("start") or {}
        if start:
            for v in m.getVars():
                if v.VarName in start:
                    v.Start = start[v.VarName]
        m.optimize()
    except gp.GurobiError as e:
        write(out_path, {"error": {"code": e.errno, "message": str(e)}})
        return
    names = {GRB.OPTIMAL: "optimal", GRB.TIME_LIMIT: "time_limit", GRB.INFEASIBLE: "infeasible",
             GRB.INF_OR_UNBD: "infeasible", GRB.UNBOUNDED: "unbounded", GRB.INTERRUPTED: "interrupted"}
    doc = {"status": names.get(m.Status, "status_%d" % m.Status),
           "version": "%d.%d.%d" % gp.gurobi.version(),
           "solutions": m.SolCount,
           "feasibilityTol": m.Params.FeasibilityTol,
           "intFeasTol": m.Params.IntFeasTol}
    if m.SolCount > 0:
        doc["objective"] = m.ObjVal
        doc["bound"] = m.ObjBound
        doc["values"] = {v.VarName: v.X for v in m.getVars() if abs(v.X) > 1e-12}
    write(out_path, doc)


if __name__ == "__main__":
    main()
