/* Compiled kernels of marine-cosim's physics (components/kernels/__init__.py loads them).
 *
 * Every function works on caller-owned float64 arrays with the layouts documented beside it and
 * allocates nothing; the numpy code in components/ is the reference they reproduce to rounding.
 */
#ifndef MC_KERNELS_H
#define MC_KERNELS_H

#include <math.h>

/* must equal ABI in components/kernels/__init__.py */
#define MC_KERNELS_ABI 7

int mc_kernels_abi(void);

/* M x = b for an n x n row-major M (overwritten) by Gaussian elimination with partial pivoting, the
 * row operations of LAPACK's dgesv (which numpy.linalg.solve calls), so results agree with numpy's
 * to rounding; b is overwritten with x. Returns -1, b half eliminated, if a pivot is zero. */
static inline int mc_solve_dense(int n, double *M, double *b) {
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(M[n * i + k]) > fabs(M[n * piv + k]))
                piv = i;
        if (M[n * piv + k] == 0.0)
            return -1;
        if (piv != k) {
            for (int j = 0; j < n; j++) {
                const double t = M[n * k + j];
                M[n * k + j] = M[n * piv + j];
                M[n * piv + j] = t;
            }
            const double t = b[k];
            b[k] = b[piv];
            b[piv] = t;
        }
        const double inv = 1.0 / M[n * k + k];
        for (int i = k + 1; i < n; i++) {
            const double f = M[n * i + k] * inv;
            for (int j = k + 1; j < n; j++)
                M[n * i + j] -= f * M[n * k + j];
            b[i] -= f * b[k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int j = i + 1; j < n; j++)
            s -= M[n * i + j] * b[j];
        b[i] = s / M[n * i + i];
    }
    return 0;
}

/* ---- articulated-body algorithm (aba.c; components/articulated_body.py) ---- */
#define MC_ABA_MAX_LINKS 64
#define MC_ABA_LINK 51          /* doubles per link in the model array */
#define MC_ABA_IN_HEAD 29       /* doubles of the input array before q */
int mc_aba_work_size(int n);
const double *mc_aba_base_inertia(int n, const double *work);   /* I_A (36), then the bias (6) */
int mc_aba(const long long *ctx);
int mc_aba_reevaluate(const long long *ctx);
void mc_aba_qdd(int n, const double *model, const double *in, double *work);   /* qdd at work[0..n) */
#define MC_ABA_POINT 13         /* doubles per point of mc_aba_points: link, r, position, velocity, v_P */
void mc_aba_points(int n, const double *work, double *points, int m);

/* ---- crane (crane.c; components/crane.py) ---- */
#define MC_CRANE_HEAD 40        /* doubles of the crane array before the joints */
#define MC_CRANE_JOINT 14       /* doubles per joint */
int mc_crane_step(const long long *ctx);
int mc_crane_evaluate(const long long *ctx);

/* ---- rigid body (rigid_body.c; components/rigid_body.py) ---- */
void mc_rigid_body_derivative(const double *params, const double *loads, const double *y, double *dy);
void mc_rigid_body_step(const double *params, const double *loads, double *y, int n, double h, const double *k1);
void mc_rigid_body_loads(const double *arms, int n, const double *in, double *loads);   /* set_loads */
void mc_rigid_body_motion(const double *cg, const double *arms, int n, const double *y, double *out);
void mc_rigid_body_accelerations(const double *params, const double *loads, const double *arms, int n,
                                 const double *y, const double *dy, double *out);

/* ---- ship (ship.c; components/ship.py) ---- */
#define MC_SHIP_MAX_RAD 512     /* fluid-memory states */
int mc_ship(const long long *ctx, int mode);   /* 0: RK4 sub-step, 1: derivative, 2: derivative + body points */
int mc_ship_waves(const long long *ctx, int mode);     /* the sea's phases, cosines and sines */
void mc_ship_points(const double *in, const double *r, int K, double *out);   /* body points' kinematics */

/* ---- lumped-mass line (line.c; components/line.py) ---- */
int mc_line_work_size(int n);
int mc_line_implicit(const long long *ctx, int *done);
void mc_line_end_loads(const long long *ctx, double *out);
int mc_line_advance(const long long *ctx, int *done);

/* ---- volumetric contact of two boxes (contact.c; components/contact.py) ---- */
#define MC_CONTACT_APART 0      /* apart beyond the tolerance: no loads, the distance */
#define MC_CONTACT_LOADS 1      /* overlapping: the loads */
#define MC_CONTACT_NONE 2       /* overlapping without interference volume: no loads, the distance */
#define MC_CONTACT_REFERENCE 3  /* near a tolerance: the numpy reference decides */
int mc_contact_box_box(const double *in, double *out);

/* ---- winch (winch.c; components/winch.py) ---- */
#define MC_WINCH_PARAMS 22      /* doubles of the parameter array */
#define MC_WINCH_STATE 24       /* doubles of the step, inputs, state and drive array */
int mc_winch_step(const double *params, double *state);              /* the sub-steps taken, or -1 */
void mc_winch_present_drive(const double *params, double *state);

#endif
